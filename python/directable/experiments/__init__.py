"""The papers' experiments, built on the library (``directable``) and kept
apart from it. Each module is one experiment or scene family:

=======================  ===================================================
``demo``                 LQR vs PD vs uncontrolled on the spring chain after
                         a push (``directable demo``)
``fem_scenes``           the T-shape and the flower: reduced StVK scenes up
                         to the reference (Barbic & Popovic 2008 fig. 1, 5.4)
``fluid_forcing``        wind impulses and Perlin-noise forces for fluids
``reduced_fluid_paths``  particles steered along paths through a reduced
                         fluid, LQR vs P/PD gain searches (sec. 6)
``mpc_vs_lqr``           MPC against precomputed LQR on the reduced T-shape
``sph_shape``            an SPH fluid shape held by MPC against an impact
``spd_constraints``      SPD constraints of Tan, Liu & Turk (sec. 4.3)
``crowds``               continuum-crowd scenes (lanes, vortex, armies,
                         quad, city, evacuation, saucer) and their metrics
``cloth``                Jeon & Choi's cloth control (Fig. 3-5, parameters)
                         and the heuristic against MPC / LQR
``offline``              the offline steps as executor tasks: fluid training
                         runs and gain search, PD gain grids, LQR sweeps
``paper_scale``          the T-shape striking its balls, the creature's
                         final-cost LQR vs PD (any size; PAPER_SIZE)
=======================  ===================================================

    from directable.experiments import fem_scenes
    scene = fem_scenes.t_shape_scene(r=10, T=100)
"""
__all__ = ["demo", "fem_scenes", "fluid_forcing", "reduced_fluid_paths", "mpc_vs_lqr", "sph_shape", "spd_constraints", "crowds", "cloth",
           "offline", "paper_scale"]
