"""What screens are built on but that is no screen of its own: the frame every screen has
(screen.py), the study screens' shared machinery (study.py) and the Item screen's annotation keys
(annotating.py). Screens subclass these; they never import each other."""
