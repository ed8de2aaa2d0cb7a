package main

import (
	"os"
	"path/filepath"
)

// The one rule every command follows to find its configuration when it is given no FILE
// (neither the argument nor --config): the first of
//
//  1. $ANIMA_CONFIG, when set;
//  2. $CREDENTIALS_DIRECTORY/anima.yaml, when it exists: the file systemd hands a unit
//     that says LoadCredential=anima.yaml:/etc/anima/anima.yaml (deploy/systemd);
//  3. ./anima.yaml, when it exists: what `anima init` writes;
//  4. ./config.yaml, the documented example a clone ships with.
//
// configRule says the same in the words of --help (no backquotes: the flag package
// would read them as the name of the flag's value).
const configRule = "$ANIMA_CONFIG, else $CREDENTIALS_DIRECTORY/anima.yaml (systemd's LoadCredential=) " +
	"when it exists, else ./anima.yaml (what anima init writes) when it exists, else ./config.yaml"

// credentialName is the name of the configuration among systemd's credentials.
const credentialName = "anima.yaml"

// defaultConfig is the configuration a command reads when no FILE is given (configRule).
func defaultConfig() string {
	if p := os.Getenv("ANIMA_CONFIG"); p != "" {
		return p
	}
	if p := credential(); p != "" {
		return p
	}
	if exists(initOut()) {
		return initOut()
	}
	return "config.yaml"
}

// credential is $CREDENTIALS_DIRECTORY/anima.yaml when it exists, else "".
func credential() string {
	if dir := os.Getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		if p := filepath.Join(dir, credentialName); exists(p) {
			return p
		}
	}
	return ""
}

// initOut is the file `anima init` writes unless told otherwise: $ANIMA_CONFIG, else
// anima.yaml. Not config.yaml: that is the documented example a clone ships with, and the
// file init writes holds the token and key, so it is one git ignores.
func initOut() string {
	if p := os.Getenv("ANIMA_CONFIG"); p != "" {
		return p
	}
	return "anima.yaml"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
