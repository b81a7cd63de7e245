package archive

// SetHook installs f as the test hook called at each kill point of Run:
// "copied", "deleted" and "recorded".
func SetHook[T any](a *Archiver[T], f func(point string)) { a.hook = f }
