// tests/interop: calc-audit's transparency-log formats read and written by an implementation
// we did not write, Go's golang.org/x/mod/sumdb/note and sumdb/tlog (Debian's
// golang-golang-x-mod-dev). tests/test_interop.sh builds it offline and runs it.
//
//	interop note VKEY NOTE                  note.Open with our key as a vkey
//	interop inclusion VKEY BUNDLE ENTRY     a tlog-proof bundle of ours: tlog.CheckRecord
//	interop consistency VKEY OLD NEW PROOF  our consistency proof: tlog.CheckTree
//	interop tiles VKEY DIR                  our tiles: the tree rebuilt by tlog.TileHashReader
//	interop log DIR N                       a log of N entries made here, for calc-audit to
//	                                        verify: its key, checkpoints, bundles, a proof
//
// Each check prints one line starting "ok"; anything else is a failure (exit 1).
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "interop: "+format+"\n", args...)
	os.Exit(1)
}

func read(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		die("%v", err)
	}
	return b
}

// checkpoint opens a signed note with the vkey in vkeyFile and parses its first three lines
// (tlog.ParseTree wants the go.sum database's own first line, so the origin is read here).
func checkpoint(vkeyFile string, text []byte) (string, tlog.Tree) {
	v, err := note.NewVerifier(strings.TrimSpace(string(read(vkeyFile))))
	if err != nil {
		die("vkey: %v", err)
	}
	n, err := note.Open(text, note.VerifierList(v))
	if err != nil {
		die("note.Open: %v", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		die("checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		die("checkpoint size: %v", err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		die("checkpoint root: %q", lines[2])
	}
	var h tlog.Hash
	copy(h[:], root)
	return lines[0], tlog.Tree{N: size, Hash: h}
}

func hashLine(s string) tlog.Hash {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		die("not a base64 hash: %q", s)
	}
	var h tlog.Hash
	copy(h[:], b)
	return h
}

// bundle splits a c2sp.org/tlog-proof@v1 bundle into index, path and checkpoint note.
func bundle(b []byte) (int64, []tlog.Hash, []byte) {
	parts := bytes.SplitN(b, []byte("\n\n"), 2)
	if len(parts) != 2 {
		die("bundle: no blank line")
	}
	lines := strings.Split(string(parts[0]), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" {
		die("bundle: header %q", lines[0])
	}
	lines = lines[1:]
	if strings.HasPrefix(lines[0], "extra ") {
		lines = lines[1:]
	}
	if !strings.HasPrefix(lines[0], "index ") {
		die("bundle: no index line")
	}
	index, err := strconv.ParseInt(lines[0][6:], 10, 64)
	if err != nil {
		die("bundle: index: %v", err)
	}
	var path []tlog.Hash
	for _, l := range lines[1:] {
		path = append(path, hashLine(l))
	}
	return index, path, parts[1]
}

// ourProof reads calc-audit's own proof text: header, two numbers, then hashes.
func ourProof(b []byte, header string) (int64, int64, []tlog.Hash) {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 3 || lines[0] != header {
		die("not a %s", header)
	}
	x, err1 := strconv.ParseInt(lines[1], 10, 64)
	y, err2 := strconv.ParseInt(lines[2], 10, 64)
	if err1 != nil || err2 != nil {
		die("%s: sizes", header)
	}
	var hs []tlog.Hash
	for _, l := range lines[3:] {
		hs = append(hs, hashLine(l))
	}
	return x, y, hs
}

// tileDir reads C2SP tlog-tiles files: x/mod names a tile tile/H/L/N, the spec tile/L/N.
type tileDir struct{ dir string }

func (d tileDir) Height() int { return 8 }

func (d tileDir) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	var out [][]byte
	for _, t := range tiles {
		p := strings.Replace(t.Path(), "tile/8/", "tile/", 1)
		b, err := os.ReadFile(filepath.Join(d.dir, p))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func (d tileDir) SaveTiles([]tlog.Tile, [][]byte) {}

func tiles(vkeyFile, dir string) {
	origin, tree := checkpoint(vkeyFile, read(filepath.Join(dir, "checkpoint")))
	hr := tlog.TileHashReader(tree, tileDir{dir})
	root, err := tlog.TreeHash(tree.N, hr)
	if err != nil || root != tree.Hash {
		die("tiles: the tree hash from the tiles is not the checkpoint's: %v", err)
	}
	// every entry of the entry bundles: its hash is the level-0 one the tiles prove
	n := int64(0)
	for b := int64(0); n < tree.N; b++ {
		t := tlog.Tile{H: 8, L: -1, N: b, W: 256}
		if left := tree.N - n; left < 256 {
			t.W = int(left)
		}
		p := strings.Replace(t.Path(), "tile/8/data/", "tile/entries/", 1)
		data := read(filepath.Join(dir, p))
		for len(data) > 0 {
			if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
				die("tiles: %s: a truncated entry", p)
			}
			l := int(binary.BigEndian.Uint16(data))
			hs, err := hr.ReadHashes([]int64{tlog.StoredHashIndex(0, n)})
			if err != nil || hs[0] != tlog.RecordHash(data[2:2+l]) {
				die("tiles: entry %d does not hash to its leaf: %v", n, err)
			}
			if _, err := tlog.ProveRecord(tree.N, n, hr); err != nil {
				die("tiles: ProveRecord(%d): %v", n, err)
			}
			data = data[2+l:]
			n++
		}
		if int64(t.W) != n-b*256 {
			die("tiles: %s holds %d entries", p, n-b*256)
		}
	}
	fmt.Printf("ok tiles %s %d entries, every leaf and the root proven from the tiles alone\n", origin, n)
}

// A log of our own, with x/mod's hashing, proofs and signatures.
func makeLog(dir string, n int64) {
	seed := sha256.Sum256([]byte("calcroute interop log key"))
	skey, vkey, err := note.GenerateKey(bytes.NewReader(seed[:]), "example.org/go-log")
	if err != nil {
		die("GenerateKey: %v", err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		die("NewSigner: %v", err)
	}
	var stored []tlog.Hash
	hr := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	entry := func(i int64) []byte { return []byte(fmt.Sprintf("go entry %d\n", i)) }
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			die("%v", err)
		}
	}
	sign := func(size int64) []byte {
		root, err := tlog.TreeHash(size, hr)
		if err != nil {
			die("TreeHash: %v", err)
		}
		text := fmt.Sprintf("example.org/go-log\n%d\n%s\n", size, base64.StdEncoding.EncodeToString(root[:]))
		msg, err := note.Sign(&note.Note{Text: text}, signer)
		if err != nil {
			die("Sign: %v", err)
		}
		return msg
	}
	for i := int64(0); i < n; i++ {
		hs, err := tlog.StoredHashes(i, entry(i), hr)
		if err != nil {
			die("StoredHashes: %v", err)
		}
		stored = append(stored, hs...)
	}
	ckpt := sign(n)
	write("checkpoint", ckpt)
	write("old.note", sign(n/2))
	write("policy", []byte("log "+vkey+"\nquorum none\n"))
	// the public key in calc-audit's key file format (hex), from the vkey's last field
	raw, _ := base64.StdEncoding.DecodeString(vkey[strings.LastIndex(vkey, "+")+1:])
	write("log.pub", []byte(hex.EncodeToString(ed25519.PublicKey(raw[1:]))+"\n"))
	for i := int64(0); i < n; i++ {
		p, err := tlog.ProveRecord(n, i, hr)
		if err != nil {
			die("ProveRecord: %v", err)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "c2sp.org/tlog-proof@v1\nindex %d\n", i)
		for _, h := range p {
			b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
		}
		b.WriteString("\n")
		b.Write(ckpt)
		write(fmt.Sprintf("bundle.%d", i), b.Bytes())
		write(fmt.Sprintf("entry.%d", i), entry(i))
	}
	tp, err := tlog.ProveTree(n, n/2, hr)
	if err != nil {
		die("ProveTree: %v", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "calcroute/audit/consistency-proof/v1\n%d\n%d\n", n/2, n)
	for _, h := range tp {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	write("consistency.proof", b.Bytes())
	fmt.Printf("ok log example.org/go-log %d entries\n", n)
}

func main() {
	a := os.Args[1:]
	if len(a) == 0 {
		die("usage: interop note|inclusion|consistency|tiles|log ...")
	}
	switch {
	case a[0] == "note" && len(a) == 3:
		origin, tree := checkpoint(a[1], read(a[2]))
		fmt.Printf("ok note %s %d %s\n", origin, tree.N, base64.StdEncoding.EncodeToString(tree.Hash[:]))
	case a[0] == "inclusion" && len(a) == 4:
		index, path, ckpt := bundle(read(a[2]))
		_, tree := checkpoint(a[1], ckpt)
		if err := tlog.CheckRecord(path, tree.N, tree.Hash, index, tlog.RecordHash(read(a[3]))); err != nil {
			die("CheckRecord: %v", err)
		}
		fmt.Printf("ok inclusion %d in %d\n", index, tree.N)
	case a[0] == "consistency" && len(a) == 5:
		_, old := checkpoint(a[1], read(a[2]))
		_, cur := checkpoint(a[1], read(a[3]))
		m, n, proof := ourProof(read(a[4]), "calcroute/audit/consistency-proof/v1")
		if m != old.N || n != cur.N {
			die("consistency: the proof links %d and %d", m, n)
		}
		if err := tlog.CheckTree(proof, cur.N, cur.Hash, old.N, old.Hash); err != nil {
			die("CheckTree: %v", err)
		}
		fmt.Printf("ok consistency %d -> %d\n", old.N, cur.N)
	case a[0] == "tiles" && len(a) == 3:
		tiles(a[1], a[2])
	case a[0] == "log" && len(a) == 3:
		n, err := strconv.ParseInt(a[2], 10, 64)
		if err != nil || n < 2 {
			die("log: N")
		}
		makeLog(a[1], n)
	default:
		die("usage: interop note|inclusion|consistency|tiles|log ...")
	}
}
