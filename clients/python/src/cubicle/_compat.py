"""The one difference between the two clients besides `await`: how they sleep."""

import time

import anyio


async def async_sleep(seconds: float) -> None:
    await anyio.sleep(seconds)


def sync_sleep(seconds: float) -> None:
    time.sleep(seconds)
