package msq

import (
	"strata/ingest/input"
	"strata/sql"
)

// InputSources returns the input sources a statement reads (its EXTERN,
// INLINE, LOCALFILES and HTTP table functions, in CTEs and subqueries too),
// parsed under the process's input policy, without planning or reading
// anything: what the node that takes a SQL task authorizes (READ on
// EXTERNAL for each type) and checks against the policy before the task
// exists. A table function the planner would refuse is the planner's error.
func InputSources(sqlText string, params []Parameter) ([]input.Source, error) {
	script, err := sql.ParseScript(sqlText)
	if err != nil {
		return nil, err
	}
	qe := &queryEnv{}
	for _, prm := range params {
		qe.params = append(qe.params, paramValue{typ: prm.Type, value: prm.Value})
	}
	p := &planner{q: qe}
	var out []input.Source
	sql.Walk(script.Statement, func(n sql.Node) bool {
		if err != nil {
			return false
		}
		tf, ok := n.(*sql.TableFunc)
		if !ok || tf.Call == nil {
			return true
		}
		var srcJSON string
		if srcJSON, _, _, _, err = p.tableFuncArgs(tf); err != nil {
			return false
		}
		var src input.Source
		if src, err = input.ParseSource([]byte(srcJSON)); err != nil {
			err = invalidInput("%s", sql.AtPos(tf, err.Error()))
			return false
		}
		out = append(out, src)
		return true
	})
	return out, err
}
