"""Data files of the host tool (garden layout, sample Orchids deck); a package so installs ship them."""
