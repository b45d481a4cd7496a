package basic

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
)

// Druid's choices (BasicAuthUtils), kept so that credentials mean the same
// in both systems and Druid's documentation applies: PBKDF2WithHmacSHA512,
// 10,000 iterations, a 512-bit key and a 32-byte random salt. PBKDF2 is
// FIPS-approved and in Go's standard library; argon2id would resist GPUs
// better, but a stored hash could then no longer be compared with Druid's,
// and the verified-credential cache (Verifier) keeps the cost off the query
// path either way.
const (
	DefaultIterations = 10000
	KeyLength         = 512 / 8
	SaltLength        = 32
	// MaxPasswordLength bounds the work one login attempt can cause.
	MaxPasswordLength = 1024
)

// Hash derives new credentials for password with a fresh random salt. It
// runs on the leader before a command is proposed: the log, the audit and
// the snapshots only ever see the result.
func Hash(password string) (*Credentials, error) {
	if err := ValidatePassword(password); err != nil {
		return nil, err
	}
	salt := make([]byte, SaltLength)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	h, err := derive(password, salt, DefaultIterations)
	if err != nil {
		return nil, err
	}
	return &Credentials{Salt: salt, Hash: h, Iterations: DefaultIterations}, nil
}

// ValidatePassword refuses an empty or oversized password.
func ValidatePassword(password string) error {
	switch {
	case password == "":
		return fmt.Errorf("password must not be empty")
	case len(password) > MaxPasswordLength:
		return fmt.Errorf("password is %d bytes long; the limit is %d", len(password), MaxPasswordLength)
	}
	return nil
}

// Matches reports, in constant time, whether password is the one c was
// derived from.
func (c *Credentials) Matches(password string) bool {
	if c == nil || len(password) > MaxPasswordLength {
		return false
	}
	h, err := derive(password, c.Salt, c.Iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(h, c.Hash) == 1
}

// ValidateCredentials checks credentials carried by a command.
func ValidateCredentials(c *Credentials) error {
	switch {
	case c == nil:
		return fmt.Errorf("credentials are missing")
	case len(c.Salt) < 16 || len(c.Salt) > 256:
		return fmt.Errorf("credential salt must be 16 to 256 bytes, got %d", len(c.Salt))
	case len(c.Hash) != KeyLength:
		return fmt.Errorf("credential hash must be %d bytes, got %d", KeyLength, len(c.Hash))
	case c.Iterations < 1000 || c.Iterations > 10_000_000:
		return fmt.Errorf("credential iterations must be 1000 to 10000000, got %d", c.Iterations)
	}
	return nil
}

func derive(password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(sha512.New, password, salt, iterations, KeyLength)
}
