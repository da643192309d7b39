package pkgtree

// Origin says where a version came from. It is recorded with the version
// and never changes; its JSON form is what the store keeps.
type Origin struct {
	// Kind is "git", "zip", "catalog" or "publish".
	Kind string `json:"kind"`
	// Repository is the repository URL as given (git and catalog).
	Repository string `json:"repository,omitempty"`
	// Path is the package directory inside the repository or archive; ""
	// for the root.
	Path string `json:"path,omitempty"`
	// Ref is the ref the install asked for ("" for the default branch).
	Ref string `json:"ref,omitempty"`
	// Commit is the full commit the tree was read at.
	Commit string `json:"commit,omitempty"`
	// FileName is the uploaded file's name (zip).
	FileName string `json:"file_name,omitempty"`
	// FileSHA256 is the sha256 of the uploaded file, in hex (zip).
	FileSHA256 string `json:"file_sha256,omitempty"`
	// CatalogItem is the id of the catalog item installed (catalog).
	CatalogItem string `json:"catalog_item,omitempty"`
	// Version is the semantic version the publisher gave (publish).
	Version string `json:"version,omitempty"`
	// Changelog is the publisher's note on the version (publish).
	Changelog string `json:"changelog,omitempty"`
}

// Origin kinds.
const (
	OriginGit     = "git"
	OriginZip     = "zip"
	OriginCatalog = "catalog"
	// OriginPublish: files uploaded through the ClawHub-compatible
	// registry (package clawhub).
	OriginPublish = "publish"
)

// Progress reports how far a long read has come. Counts grow
// monotonically within a stage; a total is 0 while unknown.
type Progress struct {
	// Stage is "resolving", "fetching" or "reading".
	Stage string
	// Files and Bytes are what has been read so far.
	Files int
	Bytes int64
	// TotalFiles and TotalBytes are what will be read, when known.
	TotalFiles int
	TotalBytes int64
}

// Progress stages.
const (
	StageResolving = "resolving"
	StageFetching  = "fetching"
	StageReading   = "reading"
)
