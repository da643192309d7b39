package index

// Validate checks one item's fields by the rules [Parse] applies to every
// item of a document (all but the uniqueness of its id), so that a
// builder can leave out one bad item instead of writing a document every
// hub refuses.
func (it *Item) Validate() error { return it.validate() }
