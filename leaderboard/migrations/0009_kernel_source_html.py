# Kernel sources are highlighted once, when stored; the rows stored before are highlighted here.

from django.db import migrations, models


def highlight_stored_kernels(apps, schema_editor):
    # Pygments directly, as leaderboard/highlighting.py did when this was written: a migration must not
    # change with the code it once ran.
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(cssclass="highlight", linenos="table", wrapcode=True)
    Kernel = apps.get_model("leaderboard", "Kernel")
    batch = []
    for kernel in Kernel.objects.filter(source_html="").only("id", "source").iterator(chunk_size=200):
        kernel.source_html = highlight(kernel.source or "", PythonLexer(), formatter)
        batch.append(kernel)
        if len(batch) >= 200:
            Kernel.objects.bulk_update(batch, ["source_html"])
            batch = []
    Kernel.objects.bulk_update(batch, ["source_html"])


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0008_language_model_name_unique'),
    ]

    operations = [
        migrations.AddField(
            model_name='kernel',
            name='source_html',
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.RunPython(highlight_stored_kernels, migrations.RunPython.noop),
    ]
