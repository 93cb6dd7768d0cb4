from __future__ import annotations

from typing import Any

from django import forms

from evaluator.errors import SubmissionError
from leaderboard.uploads import Upload, kernel_set_read


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".py"}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        if not data:
            return []
        items = data if isinstance(data, list | tuple) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in items]


class UploadForm(forms.Form):
    """A kernel set as one archive, or as manifest.json plus qNN.py files."""

    archive = forms.FileField(
        required=False,
        help_text=".zip, .tar, .tar.gz or .tgz holding manifest.json and q01.py..q22.py",
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,.tar,.gz,.tgz"}),
    )
    manifest = forms.FileField(
        required=False,
        help_text="manifest.json",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    kernels = MultipleFileField(
        required=False, label="Kernel files", help_text="q01.py .. q22.py (any subset)"
    )

    upload: Upload | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:  # a file the field refused (an empty one) is said there, not taken as none sent
            return data
        try:
            self.upload = kernel_set_read(
                archive=data.get("archive"), manifest=data.get("manifest"), files=data.get("kernels") or []
            )
        except SubmissionError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from exc
        return data
