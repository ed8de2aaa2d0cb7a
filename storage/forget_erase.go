package storage

// UserEraser deletes, inside the transaction of a user's ForgetUser, what an engine keeps
// of user in a bucket of its own whose layout only it knows (brain/memory's notes of how
// they are: memory.ForgetHowTheyAreTx). It returns the chats it deleted something in.
type UserEraser func(tx *Tx, user int64) (chats []int64, err error)

// eraseUser runs erase in tx, adding the chats they deleted in to chats.
func eraseUser(tx *Tx, user int64, erase []UserEraser, chats map[int64]bool) error {
	for _, e := range erase {
		in, err := e(tx, user)
		if err != nil {
			return err
		}
		for _, c := range in {
			if c != user {
				chats[c] = true
			}
		}
	}
	return nil
}
