package sandbox

import "errors"

// ErrNoWorkspace is matched by the error of MountWorkspace when this
// process may not mount (it is not root, or the system is not Linux): the
// work folder then stays a plain folder, measured during the run but
// without a hard size.
var ErrNoWorkspace = errors.New("sandbox: no hard-sized work folder: mounting needs root (CAP_SYS_ADMIN) on Linux")
