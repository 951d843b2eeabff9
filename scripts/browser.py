"""Debian's chromium, headless, driven by selenium through Debian's
chromium-driver (scripts/setup.sh installs both; selenium's own driver and
browser downloads cannot work here)."""
import contextlib
import shutil

CHROMIUM, CHROMEDRIVER = '/usr/bin/chromium', '/usr/bin/chromedriver'


@contextlib.contextmanager
def headless_chromium(width=1400, height=800):
    """A selenium WebDriver on a headless chromium, quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    for program in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(program):
            raise RuntimeError('%s missing: run scripts/setup.sh' % program)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # --no-sandbox: chromium refuses to run as root with its sandbox
    for argument in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                     '--window-size=%d,%d' % (width, height)):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
