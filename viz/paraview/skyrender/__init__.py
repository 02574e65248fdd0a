"""The pieces of viz/paraview/render_formation.py (run under pvbatch):

    style   the one table of colours, sizes, legend words and layout that the frames and the
            ParaView state both read
    series  finding a run's .pvd series and reading its .vtp frames (plain VTK)
    camera  views, grid masks, the parallel camera, and the plan of a series (JSON)
    scene   the offscreen VTK scene that draws a plan's frames into PNGs
    jobs    rendering a series: frames in chunks over worker processes, then the movie
    state   the ParaView state (.pvsm) written beside the frames for GUI users
"""
