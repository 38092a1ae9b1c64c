package images

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Recipe is a kernel lab knows how to build: `make setup-all` builds the
// recipes of the built-in profiles ahead, and a profile naming one that is
// missing has it built the first time it boots (Cache.EnsureKernel).
type Recipe struct {
	Arch      string
	Fragments []string
	// Upstream is the release (Upstreams) the kernel is built from, with
	// lab's patches for it and `make allnoconfig` as the base; "" is
	// Debian's linux-source-6.1 from `make tinyconfig`.
	Upstream string
}

// Recipes are the era kernels of the built-in profiles. Profiles share
// them where the era allows, to keep the number of builds small.
var Recipes = map[string]Recipe{
	"era-2.4-i386":  {Arch: "i386", Fragments: []string{"base", "era-2.4"}},
	"era-2.6-i386":  {Arch: "i386", Fragments: []string{"base", "era-2.6"}},
	"split-2g-i386": {Arch: "i386", Fragments: []string{"base", "vmsplit-2g"}},
	"split-1g-i386": {Arch: "i386", Fragments: []string{"base", "vmsplit-1g"}},
	// Upstream 2.6.32.28, one kernel per CPU family the profiles emulate.
	"linux-2.6.32-core2": {Arch: "i386", Fragments: []string{"linux-2.6.32", "linux-2.6.32-core2"}, Upstream: "2.6.32.28"},
	"linux-2.6.32-p4":    {Arch: "i386", Fragments: []string{"linux-2.6.32", "linux-2.6.32-p4"}, Upstream: "2.6.32.28"},
	"linux-2.6.32-p3":    {Arch: "i386", Fragments: []string{"linux-2.6.32", "linux-2.6.32-p3"}, Upstream: "2.6.32.28"},
}

// RecipeIDs lists the kernels `lab image build ID` builds without
// --config, sorted.
func RecipeIDs() []string { return slices.Sorted(maps.Keys(Recipes)) }

// ProfileRecipes lists the kernels lab builds that built-in profiles
// name (what `make setup-all` builds), sorted.
func ProfileRecipes() []string {
	seen := map[string]bool{}
	var ids []string
	for _, p := range Builtin() {
		if _, ok := Recipes[p.Kernel]; ok && !seen[p.Kernel] {
			seen[p.Kernel] = true
			ids = append(ids, p.Kernel)
		}
	}
	sort.Strings(ids)
	return ids
}

// BuiltinBooting lists the built-in profiles that boot kernel id.
func BuiltinBooting(id string) []string {
	var names []string
	for _, p := range Builtin() {
		if p.Kernel == id {
			names = append(names, p.Name)
		}
	}
	return names
}

// WithRecipe fills in o's arch and fragments from the recipe of o.ID, if
// lab has one, refusing others given for it; without a recipe o must
// name its arch.
func (o BuildOptions) WithRecipe() (BuildOptions, error) {
	if r, ok := Recipes[o.ID]; ok {
		if len(o.Fragments) > 0 && strings.Join(o.Fragments, ",") != strings.Join(r.Fragments, ",") {
			return o, fmt.Errorf("kernel %s is built from %s for the built-in profiles; leave out --config, or choose another id", o.ID, strings.Join(r.Fragments, " + "))
		}
		if o.Arch != "" && o.Arch != r.Arch {
			return o, fmt.Errorf("kernel %s is built for %s; leave out --arch, or choose another id", o.ID, r.Arch)
		}
		o.Fragments, o.Arch, o.Upstream = r.Fragments, r.Arch, r.Upstream
	}
	if o.Upstream != "" {
		if _, ok := Upstreams[o.Upstream]; !ok {
			return o, fmt.Errorf("kernel %s: lab knows no upstream release %q (it knows %s)", o.ID, o.Upstream, strings.Join(slices.Sorted(maps.Keys(Upstreams)), ", "))
		}
	}
	if o.Arch == "" {
		return o, fmt.Errorf("lab image build %s: --arch is required (i386)", o.ID)
	}
	return o, nil
}
