package storage

import "github.com/anima-bot/anima/brain"

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
	err := s.View(func(tx *Tx) (err error) {
		acks, err = decodeAll[brain.Ack](tx, BucketAcks, "ack")
		return err
	})
	return acks, err
}
