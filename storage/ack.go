package storage

import (
	"encoding/json"
	"fmt"

	"github.com/anima-bot/anima/brain"
)

// SaveAcks replaces the stored acks with acks.
func (s *Store) SaveAcks(acks []brain.Ack) error {
	return s.Update(func(tx *Tx) error {
		if _, err := tx.DeletePrefix(BucketAcks, nil); err != nil {
			return err
		}
		for _, a := range acks {
			if err := tx.Put(BucketAcks, []byte(a.Key), a); err != nil {
				return err
			}
		}
		return nil
	})
}

// Acks returns the stored acks.
func (s *Store) Acks() ([]brain.Ack, error) {
	var acks []brain.Ack
	err := s.View(func(tx *Tx) error {
		return tx.Scan(BucketAcks, nil, func(_, v []byte) error {
			var a brain.Ack
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("decode ack: %w", err)
			}
			acks = append(acks, a)
			return nil
		})
	})
	return acks, err
}
