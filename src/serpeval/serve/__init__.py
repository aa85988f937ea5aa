"""The live experiment service (``serpeval serve``): an ASGI app between a search front end and
two or more rankers. It interleaves (or splits) traffic, logs every impression and the users'
UBI events into an event store (:mod:`serpeval.online.events`), and answers ``/healthz`` and
``/metrics``.

Like :mod:`serpeval.cli`, an entry point on top of the layers: it imports online/, engines/
and the event store; nothing imports it except the CLI.
"""
