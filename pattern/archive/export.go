package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Store is an object store: keys are slash-separated paths. DirStore
// keeps objects as files; an S3 or GCS bucket fits the same two calls.
type Store interface {
	// Put stores data under key, replacing what was there.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the object under key; a missing key is an error that
	// wraps fs.ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
}

// DirStore is a Store in a local directory: key a/b/c is the file
// <dir>/a/b/c, written to a temporary file and renamed into place.
type DirStore string

// Put writes data to the key's file, creating its directories.
func (d DirStore) Put(_ context.Context, key string, data []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// Get reads the key's file.
func (d DirStore) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// path maps a key to a file under d, refusing keys that leave it.
func (d DirStore) path(key string) (string, error) {
	if !fs.ValidPath(key) {
		return "", fmt.Errorf("archive: store key %q is not a clean relative path", key)
	}
	return filepath.Join(string(d), filepath.FromSlash(key)), nil
}

// Part is one exported file of a month.
type Part struct {
	Key    string `json:"key"`    // <db>/<coll>/<yyyy>/<mm>/part-N.bson.zst
	Count  int    `json:"count"`  // documents in the part
	Bytes  int    `json:"bytes"`  // uncompressed BSON bytes
	Stored int    `json:"stored"` // compressed bytes
	SHA256 string `json:"sha256"` // of the compressed file
}

// Manifest describes one exported month; it is written last, under
// <db>/<coll>/<yyyy>/<mm>/manifest.json, so a manifest means a complete
// export.
type Manifest struct {
	Version    int       `json:"version"` // 1
	Database   string    `json:"database"`
	Collection string    `json:"collection"`
	Field      string    `json:"field"`
	From       time.Time `json:"from"` // first instant of the month, UTC
	To         time.Time `json:"to"`   // first instant of the next month
	Count      int       `json:"count"`
	Parts      []Part    `json:"parts"`
	Created    time.Time `json:"created"`
}

// monthOf returns the first instant of t's month and of the next, UTC.
func monthOf(t time.Time) (time.Time, time.Time) {
	t = t.UTC()
	from := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

// prefix returns <db>/<coll>/<yyyy>/<mm> of the archive for a month.
func (a *Archiver[T]) prefix(from time.Time) string {
	return fmt.Sprintf("%s/%s/%04d/%02d", a.archive.Database().Name(), a.archive.Name(), from.Year(), int(from.Month()))
}

// Export writes the archived documents of month's calendar month (UTC;
// Field in [first instant, next month)) to store as zstd-compressed
// concatenated BSON, Config.PartDocs documents per part, in Field then
// _id order, then the manifest with each part's count and SHA-256. It
// reads the archive through its {<Field>: 1} index and writes nothing to
// the database; exporting a month again replaces its files. The archive
// keeps the documents: drop them once the export is checked, if the
// archive should not stay queryable.
func (a *Archiver[T]) Export(ctx context.Context, store Store, month time.Time) (Manifest, error) {
	from, to := monthOf(month)
	m := Manifest{Version: 1, Database: a.archive.Database().Name(), Collection: a.archive.Name(),
		Field: a.cfg.Field, From: from, To: to, Created: time.Now().UTC().Truncate(time.Millisecond)}
	cur, err := a.archive.Find(ctx, a.rangeFilter(from, to, false),
		options.Find().SetSort(bson.D{{Key: a.cfg.Field, Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	defer cur.Close(ctx)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	defer enc.Close()
	var buf []byte
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		z := enc.EncodeAll(buf, nil)
		sum := sha256.Sum256(z)
		p := Part{Key: fmt.Sprintf("%s/part-%d.bson.zst", a.prefix(from), len(m.Parts)),
			Count: n, Bytes: len(buf), Stored: len(z), SHA256: hex.EncodeToString(sum[:])}
		if err := store.Put(ctx, p.Key, z); err != nil {
			return err
		}
		m.Parts = append(m.Parts, p)
		m.Count += n
		buf, n = buf[:0], 0
		return nil
	}
	for cur.Next(ctx) {
		buf = append(buf, cur.Current...)
		n++
		if n == a.cfg.PartDocs {
			if err := flush(); err != nil {
				return m, fmt.Errorf("archive: export: %w", err)
			}
		}
	}
	if err := cur.Err(); err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	if err := flush(); err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	if err := store.Put(ctx, a.prefix(from)+"/manifest.json", js); err != nil {
		return m, fmt.Errorf("archive: export: %w", err)
	}
	return m, nil
}

// maxPartBytes bounds a decompressed part (BSON documents are at most 16
// MiB each; a part holds PartDocs of them).
const maxPartBytes = 1 << 30

// ReadManifest reads the manifest of month's export; a month never
// exported wraps ErrNotFound.
func (a *Archiver[T]) ReadManifest(ctx context.Context, store Store, month time.Time) (Manifest, error) {
	from, _ := monthOf(month)
	var m Manifest
	js, err := store.Get(ctx, a.prefix(from)+"/manifest.json")
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("archive: manifest %s: %w", a.prefix(from), ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("archive: manifest: %w", err)
	}
	if err := json.Unmarshal(js, &m); err != nil {
		return m, fmt.Errorf("archive: manifest %s: %w: %v", a.prefix(from), ErrCorrupt, err)
	}
	return m, nil
}

// Restore reads month's export back and writes its documents into
// into (the archive, the live collection, or a scratch collection), one
// replace-or-insert on _id each in unordered bulk writes, so restoring
// twice changes nothing. Every part's SHA-256, size and document count
// are checked against the manifest before any of it is written; a
// mismatch wraps ErrCorrupt. It returns the documents restored.
func (a *Archiver[T]) Restore(ctx context.Context, store Store, month time.Time, into *mongo.Collection) (int64, error) {
	m, err := a.ReadManifest(ctx, store, month)
	if err != nil {
		return 0, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxPartBytes))
	if err != nil {
		return 0, fmt.Errorf("archive: restore: %w", err)
	}
	defer dec.Close()
	var total int64
	for _, p := range m.Parts {
		if !strings.HasPrefix(p.Key, a.prefix(m.From)+"/") {
			return total, fmt.Errorf("archive: restore: %w: part %q outside %s", ErrCorrupt, p.Key, a.prefix(m.From))
		}
		docs, err := readPart(ctx, store, dec, p)
		if err != nil {
			return total, fmt.Errorf("archive: restore %s: %w", p.Key, err)
		}
		models := make([]mongo.WriteModel, 0, len(docs))
		for _, d := range docs {
			models = append(models, mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: d.Lookup("_id")}}).
				SetReplacement(d).SetUpsert(true))
		}
		if len(models) > 0 {
			if _, err := into.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
				return total, fmt.Errorf("archive: restore %s: %w", p.Key, err)
			}
		}
		total += int64(len(docs))
	}
	return total, nil
}

// readPart fetches, checks and splits one part into its documents.
func readPart(ctx context.Context, store Store, dec *zstd.Decoder, p Part) ([]bson.Raw, error) {
	z, err := store.Get(ctx, p.Key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(z)
	if hex.EncodeToString(sum[:]) != p.SHA256 || len(z) != p.Stored {
		return nil, fmt.Errorf("%w: checksum or size differs", ErrCorrupt)
	}
	raw, err := dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if len(raw) != p.Bytes {
		return nil, fmt.Errorf("%w: %d bytes, manifest says %d", ErrCorrupt, len(raw), p.Bytes)
	}
	var docs []bson.Raw
	for r := bytes.NewReader(raw); r.Len() > 0; {
		d, err := bson.ReadDocument(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		docs = append(docs, d)
	}
	if len(docs) != p.Count {
		return nil, fmt.Errorf("%w: %d documents, manifest says %d", ErrCorrupt, len(docs), p.Count)
	}
	return docs, nil
}
