"""Errors raised by the sandbox layer. The CLI turns them into one line and an exit code."""


class SandboxError(Exception):
    """Something in the sandbox went wrong that is not the user's fault (engine failure, image build failure)."""


class UserInputError(SandboxError):
    """The user asked for something that cannot work (unknown package, missing entry point): exit 2, one line."""


class EngineUnavailable(SandboxError):
    """No Docker engine answers."""


class PolicyNotApplied(SandboxError):
    """The engine did not apply a part of the sandbox policy that was asked for: the scan must not go on."""


class ImageMissing(SandboxError):
    """A runtime image that was asked for without building it is not built (a head start begun before the flags
    were read does not build: the scan that adopts it, or not, builds what it needs)."""
