package storage

import "github.com/anima-bot/anima/brain"

// SaveRelationships stores relationships in one transaction.
func (s *Store) SaveRelationships(rels []brain.Relationship) error {
	if len(rels) == 0 {
		return nil
	}
	return s.Update(func(tx *Tx) error {
		for i := range rels {
			if err := tx.Put(BucketRelationships, brain.ID64(rels[i].Chat), &rels[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Relationships returns every stored relationship.
func (s *Store) Relationships() ([]brain.Relationship, error) {
	return viewAll[brain.Relationship](s, BucketRelationships, "relationship")
}

// DeleteRelationship removes chat's relationship.
func (s *Store) DeleteRelationship(chat int64) error {
	return s.Update(func(tx *Tx) error { return tx.Delete(BucketRelationships, brain.ID64(chat)) })
}
