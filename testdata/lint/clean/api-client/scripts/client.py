import os
import subprocess

import requests

URL = "https://api.example.invalid/user"
token = os.environ["GITHUB_TOKEN"]
resp = requests.get(URL, headers={"Authorization": f"Bearer {token}"}, timeout=10)
print(resp.status_code)
subprocess.run(["curl", "-fsS", URL], env=os.environ.copy(), check=True)
