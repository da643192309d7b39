package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// VersionOrigin is where one installed version came from.
type VersionOrigin struct {
	Package    string
	TreeDigest string
	// Origin is the version's origin as installed (pkgtree.Origin's JSON).
	Origin json.RawMessage
}

// VersionOrigins lists every version's origin, by package name and then
// oldest first: the catalog marks the items installed with it.
func (s *DB) VersionOrigins(ctx context.Context) ([]VersionOrigin, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.name, v.tree_digest, v.origin FROM versions v JOIN packages p ON p.id = v.package_id
		ORDER BY `+s.d.byteOrder("p.name")+`, v.id`)
	if err != nil {
		return nil, fmt.Errorf("listing the versions' origins: %w", s.d.wrap(err))
	}
	var out []VersionOrigin
	err = eachRow(rows, func() error {
		var o VersionOrigin
		var origin string
		if err := rows.Scan(&o.Package, &o.TreeDigest, &origin); err != nil {
			return err
		}
		o.Origin = json.RawMessage(origin)
		out = append(out, o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the versions' origins: %w", s.d.wrap(err))
	}
	return out, nil
}
