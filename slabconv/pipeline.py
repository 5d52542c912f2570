"""verify, boot, bench and all: the stages after regeneration."""


def add_commands(sub, common) -> None:
    pass
