"""Media for the app: images (image.py), video frames (frames.py), audio (audio.py).

No Textual here except the Strip type the half-cell renderer builds; widgets live in tui/widgets/.
Every path shown or opened comes from a Media the loader resolved, re-checked by source.local_path.
"""
