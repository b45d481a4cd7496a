package query

// parseVariance reads Druid's variance aggregator (druid-stats):
// fieldName, inputType ("float" by default, "double" or "long": how the
// column is read, which this engine takes from the column itself) and
// estimator ("population", else the sample variance).
func parseVariance(o obj, a *Aggregator) error {
	var err error
	if a.FieldName, err = o.reqStr("fieldName"); err != nil {
		return err
	}
	in, err := o.strDefault("inputType", "float")
	if err != nil {
		return err
	}
	switch in {
	case "float", "double", "long":
	case "variance":
		return Errorf(Unsupported, "variance aggregator [%s]: inputType [variance] (stored variance columns) is not supported", a.Name)
	default:
		return Invalidf("variance aggregator [%s]: unknown inputType [%s]; expected float, double, long or variance", a.Name, in)
	}
	a.Population, err = estimator(o)
	return err
}

// parseStddev reads Druid's stddev post-aggregator: the standard deviation
// of the variance aggregator fieldName names, by its own estimator.
func parseStddev(o obj, p *PostAggregator) error {
	var err error
	if p.FieldName, err = o.reqStr("fieldName"); err != nil {
		return err
	}
	p.Population, err = estimator(o)
	return err
}

// estimator reads a variance's estimator: Druid takes "population" as the
// population variance and anything else as the sample one.
func estimator(o obj) (bool, error) {
	e, err := o.strDefault("estimator", "")
	return e == "population", err
}
