// Why each surviving mutant may stay (conformance/mutation/README.md). Keys: a mutant's
// own key "file:function:operator:original -> replacement" (as survivors.md prints it),
// or "file:function" for every survivor in a function, or "file" for a whole file.
export const EXPLAINED = {};
