package storage

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A blob is a large value kept in a bucket of its own (nested under key in bucket), so
// that writing or deleting it copies no other value. bbolt keeps at least two keys on a
// page, so a large value stored beside another is rewritten with it: a new index
// segment would copy the segment before it, megabytes for a long chat. A blob's bucket
// holds one key; a small blob (under a quarter page) is stored inline in its parent.

// blobKey is the one key inside a blob's bucket.
var blobKey = []byte{0}

// PutBlob stores val under key in bucket, replacing what was there.
func (t *Tx) PutBlob(bucket string, key, val []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	if err := deleteKey(b, key); err != nil {
		return err
	}
	nb, err := b.CreateBucket(key)
	if err != nil {
		return fmt.Errorf("create blob %x in %s: %w", key, bucket, err)
	}
	nb.FillPercent = 1
	if err := nb.Put(blobKey, val); err != nil {
		return fmt.Errorf("put blob %x in %s: %w", key, bucket, err)
	}
	return nil
}

// PeekBlob returns the blob under key (nil if absent) without copying it; like Peek, the
// bytes are valid only until the transaction ends. A plain value under key (a store
// written before blobs) is returned as well.
func (t *Tx) PeekBlob(bucket string, key []byte) ([]byte, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return nil, err
	}
	if nb := b.Bucket(key); nb != nil {
		return nb.Get(blobKey), nil
	}
	return b.Get(key), nil
}

// DeleteBlob removes the blob (or plain value) under key.
func (t *Tx) DeleteBlob(bucket string, key []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return deleteKey(b, key)
}

// deleteKey removes key from b, a nested bucket or a plain value; absent is fine.
func deleteKey(b *bolt.Bucket, key []byte) error {
	err := b.DeleteBucket(key)
	if errors.Is(err, bolterrors.ErrIncompatibleValue) {
		err = b.Delete(key)
	}
	if err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return fmt.Errorf("delete %x: %w", key, err)
	}
	return nil
}
