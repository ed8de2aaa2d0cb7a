// Package systemd holds anima's systemd units, the files themselves beside this one,
// embedded so that `anima install` writes what the repository ships and its tests check:
// anima.service, the hardened system unit (root), and user/anima.service, the user unit.
package systemd

import _ "embed" // the units

// SystemUnit is anima.service, installed as /etc/systemd/system/anima.service.
//
//go:embed anima.service
var SystemUnit string

// UserUnit is user/anima.service, installed as ~/.config/systemd/user/anima.service.
//
//go:embed user/anima.service
var UserUnit string
