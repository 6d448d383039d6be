"""The execution slots' queue (parism/server/admission.py): FIFO, a cancelled waiter leaves at once
and holds nothing, a slot granted to a waiter cancelled before it resumed is handed on, the
reader thread's ``try_take`` never jumps the queue, and the queue is bounded."""

from __future__ import annotations

import asyncio
import threading

import pytest

from parism.server.admission import Admission, QueueFull


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


def test_fifo_and_release_hands_the_slot_to_the_oldest_waiter() -> None:
    async def main() -> list[int]:
        adm = Admission(1, 10)
        await adm.take()
        order: list[int] = []

        async def waiter(i: int) -> None:
            await adm.take()
            order.append(i)
            adm.release()

        tasks = [asyncio.create_task(waiter(i)) for i in range(5)]
        await asyncio.sleep(0)
        assert adm.queued == 5 and adm.running == 1
        adm.release()
        await asyncio.gather(*tasks)
        assert adm.running == 0 and adm.queued == 0
        return order

    assert run(main()) == [0, 1, 2, 3, 4]


def test_a_cancelled_waiter_leaves_the_queue_at_once_and_holds_no_slot() -> None:
    async def main() -> None:
        adm = Admission(1, 1000)
        await adm.take()
        tasks = [asyncio.create_task(adm.take()) for _ in range(500)]
        await asyncio.sleep(0)
        assert adm.queued == 500
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert adm.queued == 0 and adm.running == 1
        adm.release()
        assert adm.running == 0
        await asyncio.wait_for(adm.take(), 0.1)  # the slot is free: no waiter kept it

    run(main())


def test_a_slot_granted_then_cancelled_is_handed_on() -> None:
    async def main() -> None:
        adm = Admission(1, 10)
        await adm.take()
        first = asyncio.create_task(adm.take())
        second = asyncio.create_task(adm.take())
        await asyncio.sleep(0)
        adm.release()  # granted to ``first`` ...
        first.cancel()  # ... which is cancelled before it resumes
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.wait_for(second, 0.1)  # the slot went on to the next waiter
        assert adm.running == 1 and adm.queued == 0

    run(main())


def test_the_queue_is_bounded() -> None:
    async def main() -> None:
        adm = Admission(2, 3)
        await adm.take()
        await adm.take()
        waiting = [asyncio.create_task(adm.take()) for _ in range(3)]
        await asyncio.sleep(0)
        with pytest.raises(QueueFull) as caught:
            await adm.take()
        assert "server.max_queued = 3" in caught.value.text()
        assert "guard.max_concurrency = 2" in caught.value.text()
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)

    run(main())


def test_try_take_never_jumps_the_queue_and_release_works_from_a_thread() -> None:
    async def main() -> None:
        adm = Admission(1, 10)
        assert adm.try_take()
        assert not adm.try_take()  # no slot
        waiter = asyncio.create_task(adm.take())
        await asyncio.sleep(0)
        threading.Thread(target=adm.release).start()  # a worker thread gives the slot back
        await asyncio.wait_for(waiter, 1)
        assert not adm.try_take()  # the waiter holds it now
        adm.release()
        assert adm.try_take()  # nobody waits: the reader may take it

    run(main())
