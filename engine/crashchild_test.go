package engine_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// startCrashChild runs the test named name again in a child process, with
// the environment variable env set to dir so that the child plays the
// writer instead, and returns it with a scanner over its standard output
// (where the child prints what was acknowledged) and its standard error.
// The caller kills it with SIGKILL and then checks dir.
func startCrashChild(t *testing.T, name, env, dir string) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout), stderr
}
