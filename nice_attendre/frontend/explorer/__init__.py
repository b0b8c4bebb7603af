"""``nice-attendre explore``: a state-space explorer served to a browser (issue 33).

:mod:`.session` walks the network along a path of event indices (through the network's
``enabled``/``narrate``, as the command line does), :mod:`.state_json` turns one state into
JSON for the page, :mod:`.server` serves the page and the JSON API on the loopback address,
:mod:`.command` is the command line.
"""
