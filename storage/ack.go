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
	return viewAll[brain.Ack](s, BucketAcks, "ack")
}
