package deployplan

// ReferenceDiff is Diff before the in-step rewrite, for the differential
// test.
var ReferenceDiff = refDiff
