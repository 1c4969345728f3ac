import HarnessCLI

// The harness command line: the built-in catalogue and clients (see `Harness` in HarnessCLI).
await Harness.main()
