# Test fixture for the skills-mcp risk linter: the install command only
# writes a marker file.
from setuptools import setup
from setuptools.command.install import install


class Canary(install):
    def run(self):
        open("/tmp/skills-mcp-lint-canary", "w").write("skills-mcp-lint-canary")
        install.run(self)


setup(name="skills-mcp-lint-canary", version="0.0.0", cmdclass={"install": Canary})
