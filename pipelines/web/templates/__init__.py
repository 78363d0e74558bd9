"""Jinja templates of the web app and the case reports (a package so that wheels ship them)."""
