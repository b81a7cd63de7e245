package expr_test

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// scriptSeeds returns the expressions and documents of the eval scripts,
// each expression wrapped as {e: <expr>}.
func scriptSeeds(t testing.TB) (exprs, docs []bson.Raw) {
	files, _ := filepath.Glob("../../testdata/expr/*.txt")
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		mode := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "eval" || line == "docs":
				mode = line
				continue
			case line == "----" || line == "":
				mode = ""
				continue
			}
			switch mode {
			case "eval":
				if d, err := scripttest.ParseDoc(`{"e": ` + line + `}`); err == nil {
					exprs = append(exprs, d)
				}
				mode = ""
			case "docs":
				if d, err := scripttest.ParseDoc(line); err == nil {
					docs = append(docs, d)
				}
			}
		}
		fh.Close()
	}
	return exprs, docs
}

// FuzzParseEval parses an arbitrary expression and evaluates it on an
// arbitrary document: it must never panic, and every failure must be a
// MongoDB error; results must be valid BSON within the size limit.
func FuzzParseEval(f *testing.F) {
	exprs, docs := scriptSeeds(f)
	if len(docs) == 0 {
		docs = append(docs, bson.Raw{5, 0, 0, 0, 0})
	}
	for i, e := range exprs {
		f.Add([]byte(e), []byte(docs[i%len(docs)]))
	}
	f.Fuzz(func(t *testing.T, exprDoc, doc []byte) {
		if bsonkit.Validate(exprDoc) != nil || bsonkit.Validate(doc) != nil {
			return
		}
		elems, err := bson.Raw(exprDoc).Elements()
		if err != nil || len(elems) == 0 {
			return
		}
		sc := expr.NewScope()
		e, err := expr.Parse(elems[0].Value(), sc)
		if err != nil {
			checkMongoErr(t, err)
			return
		}
		c := expr.NewCtx(sc)
		c.SetRoot(bson.Raw(doc))
		v, err := e.Eval(c)
		if err != nil {
			checkMongoErr(t, err)
			return
		}
		if v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray {
			if len(v.Value) > expr.MaxBSONSize+1024 {
				t.Fatalf("result of %d bytes", len(v.Value))
			}
			if err := bsonkit.Validate(v.Value); err != nil {
				t.Fatalf("invalid result: %v", err)
			}
		}
	})
}

func checkMongoErr(t *testing.T, err error) {
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		t.Fatalf("not a MongoDB error: %T %v", err, err)
	}
	if me.Code == mongoerr.InternalError || strings.TrimSpace(me.Msg) == "" {
		t.Fatalf("unexpected error: %v", err)
	}
}
