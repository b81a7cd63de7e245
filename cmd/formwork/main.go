// Command formwork is Formwork's single binary: the embedded MongoDB-
// compatible server, the lab, the advisor and the operational jobs.
package main

import (
	"os"

	"github.com/formworkdb/formwork/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.StdEnv())) }
