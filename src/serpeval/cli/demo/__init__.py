"""``serpeval demo``: the main job on generated data (:mod:`.offline`), plus its trec_eval,
interleaving (:mod:`.interleaving`) and A/B (:mod:`.ab`) sections. Part of the CLI layer:
it may import everything and is imported by nothing but ``cli``.
"""
