"""Fill a PDF form."""


def fill(form, values):
    return form
