package encryption_test

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecrypt feeds any body to the framing's parser and the decryption:
// it never panics, a failure is exactly one of the four errors and shows no
// key, and what decrypts encrypts back to a body that decrypts the same.
// The seeds (testdata/fuzz/FuzzDecrypt) are the fixture's bodies, cut and
// altered, and bodies of the other shapes the errors name.
func FuzzDecrypt(f *testing.F) {
	fx := readInterop(f)
	for _, s := range fx.Samples {
		f.Add(s.Body)
	}
	kr := fixtureKeyring(f)
	_, first := fixtureKey(f, fx, "first")
	_, second := fixtureKey(f, fx, "second")
	f.Fuzz(func(t *testing.T, body []byte) {
		plaintext, err := kr.Decrypt(body)
		if err != nil {
			matched := 0
			for _, s := range sentinels {
				if errors.Is(err, s) {
					matched++
				}
			}
			if matched != 1 {
				t.Fatalf("%v matches %d of the four errors", err, matched)
			}
			showsNoKey(t, "the error", err.Error(), first, second)
			return
		}
		again, err := kr.Encrypt(plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := kr.Decrypt(again); err != nil || !bytes.Equal(back, plaintext) {
			t.Fatalf("re-encrypted, decrypts to %q, %v", back, err)
		}
	})
}

// The fuzz corpus's seeds are in testdata/fuzz/FuzzDecrypt; this keeps one
// seed of each error among them.
func TestFuzzSeedsCoverEveryError(t *testing.T) {
	seeds := readSeeds(t, "testdata/fuzz/FuzzDecrypt")
	kr := fixtureKeyring(t)
	seen := map[error]int{}
	decrypted := 0
	for _, body := range seeds {
		_, err := kr.Decrypt(body)
		if err == nil {
			decrypted++
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				seen[s]++
			}
		}
	}
	for _, s := range sentinels {
		if seen[s] == 0 {
			t.Errorf("no seed fails with %v", s)
		}
	}
	if decrypted == 0 {
		t.Error("no seed decrypts")
	}
}
