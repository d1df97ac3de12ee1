B
global_avgJ$
¾[X…> E°¾ng¾èr¾½ˆ±$¾Q«;Ø>û½)Û$<