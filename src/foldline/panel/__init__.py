"""The web panel, served by the app: its pages (:mod:`.pages`: sign-in, sign-out, the agents list
and a transcript's shell), the transcript's HTML shell itself (:mod:`.shell`), the modules joined
into one script (:mod:`.bundle`) and the scripts and stylesheet served from memory (:mod:`.assets`).
The panel's files are ``foldline/static/``."""
