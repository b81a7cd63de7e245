package cli

import "testing"

func TestByteSizeParses(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20,
		"512MB":   512e6,
		"512 mb":  512e6,
		"1GiB":    1 << 30,
		"2g":      2 << 30,
		"1.5GiB":  3 << 29,
		"64K":     64 << 10,
		"0":       0,
	} {
		var s byteSize
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
}

func TestByteSizeRejects(t *testing.T) {
	for _, in := range []string{"", "GB", "-1", "1XB", "1e3", "99999999999TB", "1..2MB"} {
		var s byteSize
		if err := s.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, s)
		}
	}
}

func TestServeCacheSizeFlag(t *testing.T) {
	env, _, _, _ := testEnv()
	cmd := newServeCmd(env)
	if err := cmd.ParseFlags([]string{"--cache-size", "1GiB"}); err != nil {
		t.Fatal(err)
	}
	if v := cmd.Flags().Lookup("cache-size").Value.String(); v != "1073741824" {
		t.Errorf("cache-size = %s", v)
	}
	if v := newServeCmd(env).Flags().Lookup("cache-size").Value.String(); v != "default" {
		t.Errorf("default cache-size = %s", v)
	}
	_, _, errb, _ := testEnv()
	if code := Main([]string{"serve", "--cache-size", "lots"}, Env{Stdout: errb, Stderr: errb, Signals: env.Signals}); code != ExitUsage {
		t.Fatalf("exit = %d, want %d; stderr %s", code, ExitUsage, errb)
	}
}
