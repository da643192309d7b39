// Package examples embeds the example skill library served when no library is configured.
package examples

import "embed"

// Library holds the example library; its skills sit under "library/".
//
//go:embed library
var Library embed.FS
