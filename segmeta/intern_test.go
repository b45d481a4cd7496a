package segmeta

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"strata/internal/eventually"
)

func TestInternTablesForgetUnusedValues(t *testing.T) {
	name := strings.Repeat("transient-datasource-name-", 3)
	list := []string{name + "dim1", name + "dim2"}
	s := internString(strings.Clone(name))
	l := internList(list)
	if internString(strings.Clone(name)) != s || &internList(list)[0] != &l[0] {
		t.Fatal("interning must return the canonical copies")
	}
	key := string(appendListKey(nil, list))
	s, l = "", nil
	var strLeft, listLeft bool
	eventually.True(t, "the intern tables to forget values that died", func() bool {
		runtime.GC()
		strTable.Lock()
		_, strLeft = strTable.m[name]
		strTable.Unlock()
		listTable.Lock()
		_, listLeft = listTable.m[key]
		listTable.Unlock()
		return !strLeft && !listLeft
	}, eventually.Within(5*time.Second), eventually.Showing(func() string { return fmt.Sprintf("string kept %v, list kept %v", strLeft, listLeft) }))
}
