package acl

import (
	"slices"
)

// Bindings lists the cached bindings f matches (Authorizer.acls, the
// DescribeAcls answer), ordered by pattern as AclAuthorizer's cache is
// (resource type, pattern type, name descending; see comparePatterns) and by
// entry within a pattern.
func (a *Authorizer) Bindings(f BindingFilter) []Binding {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []Binding
	for p, es := range a.acls {
		if !f.Pattern.Matches(p) {
			continue
		}
		for _, e := range es {
			if f.Entry.Matches(e) {
				out = append(out, Binding{Pattern: p, Entry: e})
			}
		}
	}
	slices.SortFunc(out, compareBindings)
	return out
}

// DeleteResult is what one DeleteAcls request removes.
type DeleteResult struct {
	// Deleted holds, per filter (same index), the bindings that filter
	// removes. A binding matched by several filters is credited to the
	// first of them only, as AclAuthorizer.deleteAcls does.
	Deleted [][]Binding
	// Updates lists each pattern whose entry set changes, with the set it
	// must have afterwards; an empty set means delete the znode.
	Updates []ResourceUpdate
	// Uncached lists the patterns named by filters that match at most one
	// pattern but are not in the cache. Kafka reads those znodes too, so
	// that ACLs written by another broker and not yet seen through a change
	// notification are still deleted; the caller should read them and run
	// DeleteFromEntries on what it finds.
	Uncached []ResourcePattern
}

// ResourceUpdate is the new entry set of one pattern.
type ResourceUpdate struct {
	Pattern ResourcePattern
	Entries []Entry
}

// Matching applies DeleteAcls filters to the cache without changing it
// (the caller writes the znodes, then calls SetResourceACLs). Results are
// sorted like Bindings.
func (a *Authorizer) Matching(filters []BindingFilter) DeleteResult {
	res := DeleteResult{Deleted: make([][]Binding, len(filters))}
	a.mu.RLock()
	patterns := make([]ResourcePattern, 0, len(a.acls))
	for p := range a.acls {
		patterns = append(patterns, p)
	}
	slices.SortFunc(patterns, comparePatterns)
	for _, p := range patterns {
		remaining, perFilter := DeleteFromEntries(p, a.acls[p], filters)
		if perFilter == nil {
			continue
		}
		res.Updates = append(res.Updates, ResourceUpdate{Pattern: p, Entries: remaining})
		for i, bs := range perFilter {
			res.Deleted[i] = append(res.Deleted[i], bs...)
		}
	}
	seen := map[ResourcePattern]bool{}
	for _, f := range filters {
		for _, p := range f.Pattern.definiteResources() {
			if _, cached := a.acls[p]; !cached && !seen[p] && storable(p) {
				seen[p] = true
				res.Uncached = append(res.Uncached, p)
			}
		}
	}
	a.mu.RUnlock()
	slices.SortFunc(res.Uncached, comparePatterns)
	for i := range res.Deleted {
		slices.SortFunc(res.Deleted[i], compareBindings)
	}
	return res
}

// DeleteFromEntries applies DeleteAcls filters to one pattern's entry set:
// the filters whose pattern part matches p compete for each entry, the
// first one whose entry part matches takes it. It returns the entries left
// and, per filter, the bindings removed; perFilter is nil when nothing is
// removed.
func DeleteFromEntries(p ResourcePattern, current []Entry, filters []BindingFilter) (remaining []Entry, perFilter [][]Binding) {
	var applicable []int
	for i, f := range filters {
		if f.Pattern.Matches(p) {
			applicable = append(applicable, i)
		}
	}
	if len(applicable) == 0 {
		return normalizeEntries(current), nil
	}
	for _, e := range normalizeEntries(current) {
		taken := false
		for _, i := range applicable {
			if filters[i].Entry.Matches(e) {
				if perFilter == nil {
					perFilter = make([][]Binding, len(filters))
				}
				perFilter[i] = append(perFilter[i], Binding{Pattern: p, Entry: e})
				taken = true
				break
			}
		}
		if !taken {
			remaining = append(remaining, e)
		}
	}
	return remaining, perFilter
}
