package segment

import (
	"runtime"
	"strings"
	"testing"
	"time"
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		strTable.Lock()
		_, strLeft := strTable.m[name]
		strTable.Unlock()
		listTable.Lock()
		_, listLeft := listTable.m[key]
		listTable.Unlock()
		if !strLeft && !listLeft {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("entries still present after their values died: string %v list %v", strLeft, listLeft)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
