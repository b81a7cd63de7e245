package lab

// scenario is one pattern's application, implemented in the naive and
// the patterned form. run generates the data, measures both forms and
// returns the metrics and the latency samples of the main operations; it
// calls e.step steps times. All use of the pattern's package is in its
// file, scenario_<pattern>.go.
type scenario struct {
	pattern string
	title   string
	steps   int
	run     func(e *env) ([]Metric, []Latency, error)
}

// scenarios are the lab's scenarios in run order: the catalogue's order.
var scenarios = []scenario{
	extrefScenario,
	subsetScenario,
	computedScenario,
	approxScenario,
	bucketScenario,
	outlierScenario,
	attributeScenario,
	polymorphicScenario,
	versioningScenario,
	timeseriesScenario,
	archiveScenario,
	treeScenario,
}
