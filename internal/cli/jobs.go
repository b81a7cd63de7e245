package cli

import "github.com/spf13/cobra"

// jobCommands builds the subcommands of formwork jobs. Each job's file
// appends its constructor in an init function, so jobs are added without
// editing this file.
var jobCommands []func(Env) *cobra.Command

// newJobsCmd is formwork jobs: the resumable operational jobs (archive,
// migrate, recompute) that record their progress in the database.
func newJobsCmd(env Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "jobs",
		Short: "Run the resumable operational jobs (archive, migrate, recompute)",
		Long: `Each job works in batches, records its progress in the database it works
on, and resumes where a killed run stopped. --dry-run reports what a run
would do without writing.`,
	}
	for _, f := range jobCommands {
		c.AddCommand(f(env))
	}
	return c
}
