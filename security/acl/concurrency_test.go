package acl

import (
	"sync"
	"testing"
)

// Readers and writers may run concurrently (run with -race); a bounded
// number of iterations on each side.
func TestAuthorizerConcurrentUse(t *testing.T) {
	a := newTestAuthorizer()
	r := lit(topic, "t")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 500; i++ {
			if i%2 == 0 {
				a.SetResourceACLs(r, []Entry{allowReadAll})
			} else {
				a.RemoveResource(r)
			}
		}
		a.SetResourceACLs(r, []Entry{allowReadAll})
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 500; i++ {
			a.Authorize(alice, aliceHost, opRead, res(topic, "t"))
			a.AuthorizeByResourceType(alice, aliceHost, opRead, topic)
			a.Bindings(AnyFilter)
			a.Matching([]BindingFilter{AnyFilter})
		}
	}()
	wg.Wait()
	if !a.Authorize(alice, aliceHost, opRead, res(topic, "t")) || !a.AuthorizeByResourceType(alice, aliceHost, opRead, topic) {
		t.Fatal("final state lost")
	}
}
